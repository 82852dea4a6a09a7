//! IPv4 CIDR parsing, carving GPU subnets out of a range, and overlap tests.
//!
//! Only the arithmetic lives here; which ranges must not overlap, and the messages, are in
//! the validation rules (`validate.rs`).

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

/// Why a string is not an acceptable IPv4 CIDR block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CidrError {
    /// Not of the form `a.b.c.d/n`.
    Malformed,
    /// An IPv6 block; a3ctl's networks are IPv4-only (multi-networking has no dual-stack).
    Ipv6,
    /// Host bits are set; carries the block the user probably meant.
    HostBitsSet(Ipv4Net),
}

/// Parses `10.0.0.0/20`, refusing host bits (GCP rejects `10.0.0.1/20`).
pub fn parse(text: &str) -> Result<Ipv4Net, CidrError> {
    let Some((_, prefix)) = text.split_once('/') else {
        return Err(CidrError::Malformed);
    };
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CidrError::Malformed);
    }
    match text.parse::<Ipv4Net>() {
        Ok(net) if net.trunc() == net => Ok(net),
        Ok(net) => Err(CidrError::HostBitsSet(net.trunc())),
        Err(_) if text.parse::<ipnet::Ipv6Net>().is_ok() => Err(CidrError::Ipv6),
        Err(_) => Err(CidrError::Malformed),
    }
}

/// The first `count` blocks of length `prefix` inside `range`, or `None` when they do not fit.
pub fn carve(range: Ipv4Net, prefix: u8, count: usize) -> Option<Vec<Ipv4Net>> {
    if prefix < range.prefix_len() || prefix > 32 {
        return None;
    }
    let available = 1u64 << (prefix - range.prefix_len());
    if count as u64 > available {
        return None;
    }
    let step = 1u64 << (32 - prefix);
    let base = u64::from(u32::from(range.network()));
    (0..count as u64)
        .map(|i| {
            let address = u32::try_from(base + i * step).ok()?;
            Ipv4Net::new(Ipv4Addr::from(address), prefix).ok()
        })
        .collect()
}

/// How many blocks of length `prefix` fit in `range` (saturating).
pub fn capacity(range: Ipv4Net, prefix: u8) -> u64 {
    if prefix < range.prefix_len() || prefix > 32 {
        return 0;
    }
    1u64 << (prefix - range.prefix_len()).min(63)
}

/// Whether two blocks share any address.
pub fn overlaps(a: Ipv4Net, b: Ipv4Net) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(text: &str) -> Ipv4Net {
        parse(text).expect("test blocks are valid")
    }

    #[test]
    fn parse_accepts_canonical_blocks_only() {
        assert_eq!(parse("10.0.0.0/20"), Ok(net("10.0.0.0/20")));
        assert_eq!(
            parse("10.0.0.1/20"),
            Err(CidrError::HostBitsSet(net("10.0.0.0/20")))
        );
        assert_eq!(parse("10.0.0.0"), Err(CidrError::Malformed));
        assert_eq!(parse("10.0.0.0/33"), Err(CidrError::Malformed));
        assert_eq!(parse("10.0.0.0/+8"), Err(CidrError::Malformed));
        assert_eq!(parse("fd00::/64"), Err(CidrError::Ipv6));
        assert_eq!(parse("banana"), Err(CidrError::Malformed));
    }

    #[test]
    fn carve_takes_consecutive_blocks() {
        let blocks = carve(net("192.168.0.0/16"), 24, 3).expect("fits");
        assert_eq!(
            blocks,
            vec![
                net("192.168.0.0/24"),
                net("192.168.1.0/24"),
                net("192.168.2.0/24")
            ]
        );
        assert_eq!(carve(net("192.168.0.0/22"), 24, 5), None);
        assert_eq!(carve(net("192.168.0.0/24"), 20, 1), None);
        assert_eq!(carve(net("0.0.0.0/0"), 32, 2).map(|b| b.len()), Some(2));
        assert_eq!(capacity(net("192.168.0.0/22"), 24), 4);
    }

    #[test]
    fn overlap_is_symmetric_and_exact() {
        assert!(overlaps(net("10.0.0.0/8"), net("10.4.0.0/14")));
        assert!(overlaps(net("10.4.0.0/14"), net("10.0.0.0/8")));
        assert!(!overlaps(net("10.0.0.0/20"), net("10.0.16.0/20")));
    }
}
