"""Run a command under Landlock: restrict this process, then exec the command in it.

    python -I -S landlock_exec.py [--hide P]... [--write DIR]... [--tmpdir DIR]
                                  [--write-file F]... -- bash -c CMD
    python -I -S landlock_exec.py --probe

The `bash` sandbox's second backend (`core/tools/backend.py` picks it when bubblewrap is
missing and the kernel offers Landlock ABI >= `MIN_ABI`). Stdlib only, run as a file
like `_reaper.py`, under the supervisor: it sets `PR_SET_NO_NEW_PRIVS`, drops every
capability (as root a command would otherwise keep them all), leaves the terminal's
session, builds one Landlock ruleset and restricts itself, then `execvp`s the command.
A Landlock domain is inherited across fork and exec and cannot be lifted, so everything
the command starts (background jobs, `setsid`, double forks) stays in it. The agent
itself is never restricted: the probe, too, runs in a child.

The ruleset handles every filesystem right the ABI has (`fs_rights`) and, from ABI 6,
scopes signals and abstract unix sockets to the domain (the command cannot signal the
agent or its supervisor). Landlock also denies `ptrace` (so `/proc/<pid>/environ`,
`maps`, `mem`) of every process outside the domain, and `mount`/`pivot_root`. Granted:

- read and execute everywhere except the `--hide` paths (`cover`: a rule on each entry
  beside the path to a hidden one, never on its ancestors, whose listings are denied);
- every write right beneath each `--write` directory and the `--tmpdir` (also exported
  as `TMPDIR`), the hidden paths again excepted;
- writing (not creating) the `--write-file` devices, e.g. `/dev/null`.

Own wrapper rather than a binding: the three syscalls and prctl fit in this file, no
dependency enters the lock, and the helper must start fast as a bare `-I -S` script.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
"""The syscall numbers; the same on every architecture (the unified table)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 38, 24, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
MIN_ABI = 3
"""Below 3 a file outside the workspace could still be truncated (no TRUNCATE right)."""
PREFIX = "acp-plus-landlock: "

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights a rule on a non-directory may carry."""
DEVICE_RIGHTS = WRITE_FILE | TRUNCATE | IOCTL_DEV


def fs_rights(abi: int) -> int:
    """Every filesystem access right Landlock ABI `abi` can handle."""
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def scopes(abi: int) -> int:
    """The IPC scopes of ABI `abi` (ABI 6 added them)."""
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def cover(root: str, hidden: list[str]) -> list[str]:
    """Paths whose hierarchies together are `root`'s minus the `hidden` ones: `root`
    itself when it holds none, else each entry of it, recursively, beside the way to a
    hidden path. Symbolic links get no rule (access through one is checked at its
    target); an unlistable directory on the way is left out (denied, never widened)."""
    inside = [h for h in hidden if _within(h, root)]
    if not inside:
        return [root]
    if root in inside:
        return []
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return []
    found: list[str] = []
    for entry in entries:
        if not entry.is_symlink():
            found += cover(entry.path, inside)
    return found


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI, or 0 when it has none (or it is disabled)."""
    result = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    return max(0, int(result))


def _add(ruleset: int, path: str, rights: int, strict: bool = True) -> None:
    # Not strict (a read-cover entry): a path the kernel will not take a rule for is
    # left out, which denies more, never less.
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return  # gone since it was listed, or unreachable: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        if rights:
            rule = _PathBeneath(rights, fd)
            result = _libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
            if strict:
                _check(result, f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def _drop_privileges() -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):  # EINVAL past the last capability, EPERM without CAP_SETPCAP
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 and ctypes.get_errno() == 22:
            break
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, self
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty
    _check(_libc.capset(header, data), "capset")


def restrict(abi: int, hidden: list[str], writable: list[str], files: list[str]) -> None:
    """Confine this process (and all it will start) as the module docstring says."""
    handled = fs_rights(abi)
    sizes = {1: 8, 2: 8, 3: 8, 4: 16, 5: 16}
    attr = _RulesetAttr(handled, 0, scopes(abi))
    ruleset = _check(
        _libc.syscall(
            SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(sizes.get(abi, 24)), 0
        ),
        "landlock_create_ruleset",
    )
    try:
        for path in cover("/", hidden):
            _add(ruleset, path, READ, strict=False)
        for root in writable:
            for path in cover(root, hidden):
                _add(ruleset, path, handled & ~READ)
        for path in files:
            _add(ruleset, path, DEVICE_RIGHTS & handled)
        _drop_privileges()
        _check(_libc.syscall(SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _parse(argv: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    names = ("--hide", "--write", "--tmpdir", "--write-file")
    options: dict[str, list[str]] = {name: [] for name in names}
    index = 0
    while index < len(argv) and argv[index] != "--":
        name = argv[index]
        if name not in options or index + 1 >= len(argv):
            raise ValueError(f"bad argument {name!r}")
        options[name].append(os.path.realpath(argv[index + 1]))
        index += 2
    command = argv[index + 1 :]
    if not command:
        raise ValueError("no command after --")
    return options, command


def main(argv: list[str]) -> int:
    """The helper's entry point: `--probe`, or restrict and exec the command."""
    abi = abi_version()
    if abi < MIN_ABI:
        print(f"{PREFIX}kernel Landlock ABI {abi} < {MIN_ABI}", file=sys.stderr)
        return 1
    try:
        if argv == ["--probe"]:
            restrict(abi, [], [], ["/dev/null"])
            print(abi)
            return 0
        options, command = _parse(argv)
        writable = options["--write"] + options["--tmpdir"]
        restrict(abi, options["--hide"], writable, options["--write-file"])
    except (OSError, ValueError) as error:
        print(f"{PREFIX}{error}", file=sys.stderr)
        return 1
    if options["--tmpdir"]:
        os.environ["TMPDIR"] = options["--tmpdir"][0]
    with contextlib.suppress(OSError):
        os.setsid()  # no controlling terminal to push input into (bubblewrap's --new-session)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"{PREFIX}{command[0]}: {error.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
