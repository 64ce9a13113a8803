// Package state is tether's session store: the session schema, the phase
// machine (Transition: idle, active, waiting, ended), and durable, locked
// storage under <git-common-dir>/tether/.
//
// What it promises:
//   - Every read-modify-write of a session (Mutate, MutateTx) runs under the
//     session's advisory lock (flock; LockFileEx on Windows) with a bounded
//     wait, so no update is lost between concurrent processes.
//   - Every state write is atomic and durable: temp file in the same
//     directory, fsync, rename, fsync of the directory. A reader never sees a
//     partial file, and a crash at any point leaves a store that the next Load
//     or Mutate resolves to the last completed write.
//   - Turn records are appended and fsynced before the state that counts
//     them, so the turn log never has less than the state claims. A torn last
//     line (crash mid-append) is skipped by ReadTurns and cut off by the next
//     append.
//   - A turn event that changes nothing but what its record says (the turn
//     start or end, its time, prompt and owner) is a single fsynced append:
//     the turn log is then ahead of the state file, and every reader (Load,
//     List, Mutate) replays the records past turn_log_size onto it, the same
//     way the writer applied them. The state file is rewritten once the log
//     runs 4 KiB ahead, or when anything else changes.
//   - An event its writer cannot apply in time (the session's lock stays
//     busy past Options.LockWait) is spooled, not dropped (Spool): without
//     a lock, one fsynced file per event, whole when it appears. The next
//     writer of the session applies the spooled events (Options.Apply) in
//     the order they were spooled, before its own change, and records
//     them in the state it writes (and in the turn records they append,
//     for a writer killed in between): each is applied exactly once,
//     whatever is killed when. Every reader (Load, List, Preview) sees
//     them applied, in memory, before any writer has; a store opened
//     without Apply refuses to write a session that has some.
//   - MutateEach writes many sessions with the same promises for each, their
//     writes grouped: every state file is fsynced (concurrently) before its
//     rename, and each directory the group changed is fsynced once per step,
//     not once per session. Locks are taken in ID order. MutateEachThen
//     lets a caller change the group's sessions once all are loaded, before
//     they are written (the sweep records the checkpoints of the sessions
//     it ends there).
//   - Ended sessions live in ended/ and cost nothing to List: it reads only
//     sessions/, with one stat in ended/ per listed session to finish a
//     move between the two a crash cut short.
//   - The file "active" (ActiveFlag) exists whenever the store holds a live
//     session or a to-do mark: every such write creates it after itself, and
//     only SettleActive removes it, before it looks for work. A commit hook
//     can thus tell from one stat that there is nothing to do, however many
//     sessions have ended.
//   - Session IDs are validated and every path is opened through os.Root, so
//     no ID or symlink leads outside the store: the staging files other
//     packages write (StagingFile) too. The store's own locks (Lock) live in
//     locks/store/, where no session ID can name a file.
//   - Corrupt files are moved to quarantine/ with a reason, never deleted.
//     A quarantined state file takes its session's turn log along, so a
//     record created afresh under the same ID never replays turns that were
//     not its own.
//   - Every record of a session has an incarnation, a random name given when
//     its state file is created: an ID the agent brings back after the
//     record was removed, quarantined or lost gets a new one, so nothing
//     named after a record (checkpoints) is named twice.
//   - Fields this build does not know survive a read-modify-write, and a
//     session written by a newer schema is read but never written.
//   - A session in PhaseWaiting carries what it waits for (Session.Waiting),
//     and no other phase does (SetPhase). A wait ends only by a transition:
//     a signal that it is over, a turn's start or end, the session's end;
//     never by a timer. Its signals add up (BeginWait): the same wait
//     signalled again keeps its first time.
//   - A wait is kept beside the state, in sessions/<id>.wait, written whole
//     and renamed into place but never fsynced: a transaction that changes
//     only the wait writes nothing else (no fsync at all), and a crash can
//     lose a wait, never corrupt a state: the session then reads as it was
//     before it (active, or idle at its prompt) until the agent's next
//     signal. A wait file applies only to the turn and the phase it was
//     written for; a stale or unreadable one is ignored, and goes at the
//     session's next write.
//
// Store is safe for concurrent use by goroutines and by processes.
package state
