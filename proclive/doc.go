// Package proclive pins down one process across time and answers whether it
// is still running.
//
// An [Identity] is more than a PID: it carries the OS, a raw per-OS start
// fingerprint, the boot ID, the host and (on Linux) the PID namespace of the
// capturer, so that a reused PID, a reboot or a check from another machine is
// never mistaken for the original process.
//
// The package promises:
//
//   - [Check] returns [Dead] only on proof: the process is confirmed absent
//     (ESRCH, never EPERM), its PID now names a process with another start
//     fingerprint, the same host has rebooted since the capture, or it is a
//     zombie with no live thread. Everything it cannot decide here — another
//     OS, host or PID namespace, an unreadable boot ID or /proc, permission
//     denied, hidepid, an unsupported platform — is [Unknown], never [Dead].
//   - [Capture] never records a thread, a zombie or a process it cannot read.
//   - [ResolveOwner] returns the agent process that runs a hook, or an error:
//     [ErrNoOwner] when the walk reaches a session root (init, systemd, sshd,
//     tmux, a terminal), [ErrChainBroken] when an ancestor vanished or its PID
//     was reused during the walk. It never returns a wrong owner: an agent's
//     hint (CLAUDE_PID) counts only for an ancestor below the session roots
//     and daemons the walk stops at, so init, or a terminal, is never taken
//     for one. A daemon shared by many sessions (Codex's app-server, which outlives every TUI)
//     owns none of them: under one, the owner is the session's client (the
//     Codex TUI resuming the session by its ID, else the only one working in
//     the session's directory; Linux only), or [ErrSharedDaemon].
//
// The decisions are pure functions over observed facts (decide for liveness,
// classify for the role of a process in the owner walk, walk for the walk
// itself); the per-OS files only gather facts:
//
//   - Linux: one read of /proc/<pid>/stat (start time field 22, corrected for
//     the reader's time namespace), /proc/sys/kernel/random/boot_id and the
//     PID namespace link /proc/self/ns/pid.
//   - macOS: sysctl kern.proc.pid (P_starttime as microseconds),
//     kern.procargs2 and kern.bootsessionuuid.
//   - Windows: OpenProcess, GetProcessTimes (creation time as a FILETIME),
//     NtQueryInformationProcess. Boot is left empty: creation times are
//     absolute 100 ns timestamps, so a reboot already shows as "no such
//     process" or "start differs".
//   - FreeBSD (amd64, arm64): sysctl kern.proc.pid decoded at fixed offsets of
//     struct kinfo_proc, start as ki_start minus kern.boottime. Boot is left
//     empty: kern.boottime moves whenever the clock is stepped, so as a boot
//     ID it would declare live processes dead; the start fingerprint is
//     already relative to boot with microsecond resolution.
//   - Anything else: Capture, ResolveOwner and Args fail with
//     [ErrUnsupported] and Check says Unknown.
//
// [Args] reads a process's command line where the walk reads it:
// /proc/<pid>/cmdline, kern.procargs2, kern.proc.args, the process's
// command line on Windows.
package proclive
