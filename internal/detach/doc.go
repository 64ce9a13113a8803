// Package detach starts the processes tether leaves running on their own
// (the hook's captures and background sweeps, the sweeps a commit does not
// wait for, the commands that notify the user): in a session or process
// group of their own, holding none of the descriptors their starter
// inherited, so neither the agent's terminal nor a pipe an agent or git
// waits on is tied to them. Standard library only: the hook imports it.
package detach
