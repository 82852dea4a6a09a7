# A fork server for the installed gcloud (`mod.rs`, `gcloud_output`). gcloud is Python: each
# process spends about 0.7 s of CPU importing its modules before it reads its arguments, and the
# tests start hundreds. This interpreter imports gcloud once (its own `lib/gcloud.py`, the module
# the `gcloud` script runs) and forks a child for every command: the child takes the command's
# environment, working directory and arguments, sends stdout and stderr to the files the request
# names, runs `gcloud.main()` exactly as the script does, and writes its exit code on the
# connection. Nothing of gcloud is replaced or skipped; only its imports are shared.
#
# Usage: PYTHON forkserver.py SDK_ROOT SOCKET. Serves until its stdin closes (the test process
# holding the pipe exited), then removes the socket's directory.

import json
import os
import select
import shutil
import signal
import socket
import sys

SDK_ROOT, SOCKET = sys.argv[1], sys.argv[2]
GCLOUD_PY = os.path.join(SDK_ROOT, 'lib', 'gcloud.py')
sys.path.insert(0, os.path.dirname(GCLOUD_PY))
sys.argv = [GCLOUD_PY]

import gcloud  # noqa: E402  (the SDK's lib/gcloud.py)

# What `gcloud.main()` imports before it runs a command, and the generated clients of the APIs
# the simulator serves (the largest modules).
sys.path = gcloud.reorder_sys_path(sys.path)
gcloud._fix_google_module()
gcloud._import_gcloud_main()
for api in ('compute.v1.compute_v1', 'container.v1.container_v1', 'file.v1.file_v1',
            'storage.v1.storage_v1', 'serviceusage.v1.serviceusage_v1',
            'artifactregistry.v1.artifactregistry_v1', 'iam.v1.iam_v1',
            'cloudresourcemanager.v3.cloudresourcemanager_v3',
            'cloudquotas.v1.cloudquotas_v1'):
  for part in ('_client', '_messages'):
    try:
      __import__('googlecloudsdk.generated_clients.apis.' + api + part)
    except ImportError:
      pass

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(SOCKET)
server.listen(64)
# Children are reaped by the kernel; each reports its own exit code.
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
sys.stdout.write('ready\n')
sys.stdout.flush()


# Command groups whose own modules are large, imported here by the first command of the group
# (not at start: a test process that never runs one does not pay for them).
GROUPS = {
    'storage': ('googlecloudsdk.command_lib.storage.wildcard_iterator',),
}
warmed = set()


def read_request(conn):
  data = b''
  while not data.endswith(b'\n'):
    chunk = conn.recv(1 << 16)
    if not chunk:
      return None
    data += chunk
  return json.loads(data)


def warm(request):
  group = request['args'][0] if request['args'] else None
  if group in GROUPS and group not in warmed:
    warmed.add(group)
    for module in GROUPS[group]:
      try:
        __import__(module)
      except Exception:  # pylint: disable=broad-except
        pass  # the command imports it itself, and reports what fails


def serve(conn, request):
  signal.signal(signal.SIGCHLD, signal.SIG_DFL)
  os.environ.clear()
  os.environ.update(request['env'])
  os.chdir(request['cwd'])
  stdin = os.open(os.devnull, os.O_RDONLY)
  stdout = os.open(request['stdout'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
  stderr = os.open(request['stderr'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
  os.dup2(stdin, 0)
  os.dup2(stdout, 1)
  os.dup2(stderr, 2)
  sys.argv = [GCLOUD_PY] + request['args']
  code = 0
  try:
    try:
      gcloud.main()
    except SystemExit as e:
      if e.code is None:
        code = 0
      elif isinstance(e.code, int):
        code = e.code
      else:
        sys.stderr.write('{}\n'.format(e.code))
        code = 1
    # What the interpreter does at exit: atexit handlers, then flushed streams.
    import atexit
    atexit._run_exitfuncs()
  except BaseException:  # pylint: disable=broad-except
    import traceback
    traceback.print_exc()
    code = 1
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except Exception:  # pylint: disable=broad-except
      pass
  conn.sendall('{}\n'.format(code & 0xff).encode())
  conn.close()
  os._exit(code & 0xff)


while True:
  ready, _, _ = select.select([server, sys.stdin], [], [])
  if sys.stdin in ready:
    if not os.read(sys.stdin.fileno(), 1 << 10):
      # Its directory (this program, the socket, its configuration) goes with it.
      shutil.rmtree(os.path.dirname(SOCKET), ignore_errors=True)
      break
  if server in ready:
    conn, _ = server.accept()
    request = read_request(conn)
    if request is None:
      conn.close()
      continue
    warm(request)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
      server.close()
      serve(conn, request)
    conn.close()
