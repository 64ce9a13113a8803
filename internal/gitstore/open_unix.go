//go:build unix

package gitstore

import "syscall"

// noPoll opens without Go offering the descriptor to its poller, which
// refuses regular files and costs four fcntl calls and an epoll_ctl to ask
// (O_NONBLOCK does nothing to a regular file). go-git opens every loose
// object and pack it reads.
const noPoll = syscall.O_NONBLOCK
