//! IPv4 CIDR ranges as Compute checks them: parsing, containment and overlap.

use std::fmt;

/// An IPv4 range `address/prefix` whose host bits are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub address: u32,
    pub prefix: u8,
}

/// Why a string is not a usable CIDR range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CidrError {
    /// Not `a.b.c.d/n` with n in 0..=32.
    Malformed,
    /// Bits set after the prefix (`10.0.0.1/24`).
    HostBitsSet,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Cidr, CidrError> {
        let (address, prefix) = text.split_once('/').ok_or(CidrError::Malformed)?;
        let prefix: u8 = prefix.parse().map_err(|_| CidrError::Malformed)?;
        if prefix > 32 {
            return Err(CidrError::Malformed);
        }
        let address: std::net::Ipv4Addr = address.parse().map_err(|_| CidrError::Malformed)?;
        let address = u32::from(address);
        let cidr = Cidr { address, prefix };
        if address & !cidr.mask() != 0 {
            return Err(CidrError::HostBitsSet);
        }
        Ok(cidr)
    }

    /// Parses a firewall source or destination range, where a bare address means `/32`.
    pub fn parse_range(text: &str) -> Result<Cidr, CidrError> {
        if text.contains('/') {
            Cidr::parse(text)
        } else {
            Cidr::parse(&format!("{text}/32"))
        }
    }

    pub fn mask(self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix))
        }
    }

    pub fn last(self) -> u32 {
        self.address | !self.mask()
    }

    pub fn contains(self, other: Cidr) -> bool {
        self.prefix <= other.prefix && (other.address & self.mask()) == self.address
    }

    pub fn overlaps(self, other: Cidr) -> bool {
        self.address <= other.last() && other.address <= self.last()
    }

    /// The first usable address, which Compute gives the subnet's gateway.
    pub fn gateway(self) -> std::net::Ipv4Addr {
        std::net::Ipv4Addr::from(self.address.wrapping_add(1))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            std::net::Ipv4Addr::from(self.address),
            self.prefix
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares_ranges() {
        let a = Cidr::parse("10.0.0.0/24").unwrap();
        let b = Cidr::parse("10.0.0.0/23").unwrap();
        let c = Cidr::parse("10.0.1.0/24").unwrap();
        assert!(b.contains(a));
        assert!(!a.contains(b));
        assert!(a.overlaps(b));
        assert!(!a.overlaps(c));
        assert_eq!(a.gateway().to_string(), "10.0.0.1");
        assert_eq!(Cidr::parse("10.0.0.1/24"), Err(CidrError::HostBitsSet));
        assert_eq!(Cidr::parse("10.0.0.0/33"), Err(CidrError::Malformed));
        assert_eq!(Cidr::parse("nope"), Err(CidrError::Malformed));
        assert_eq!(Cidr::parse_range("1.2.3.4").unwrap().prefix, 32);
        assert_eq!(Cidr::parse("0.0.0.0/0").unwrap().last(), u32::MAX);
    }
}
