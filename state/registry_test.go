package state

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestRegistry: registering is idempotent and safe from many processes
// at once; Registered reads back every store and nothing else; a store
// unregistered goes.
func TestRegistry(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "state", "tether", "stores")
	repos := []string{filepath.Join(t.TempDir(), "a", ".git"), filepath.Join(t.TempDir(), "b", ".git"), filepath.Join(t.TempDir(), "b.git")}
	var wg sync.WaitGroup
	for range 8 {
		for _, r := range repos {
			wg.Go(func() {
				if err := Register(registry, r); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	// What is not an entry of the registry's is ignored: a leftover
	// temporary file, a file whose name is not its content's.
	if err := os.WriteFile(filepath.Join(registry, ".new-123"), []byte(repos[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(registry, "0123"), []byte("/etc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Registered(registry)
	want := slices.Sorted(slices.Values(repos))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Registered = %q, %v; want %q", got, err, want)
	}
	if entries, _ := os.ReadDir(registry); len(entries) != len(repos)+2 {
		t.Errorf("%d files in the registry, want one per store (and the two planted)", len(entries))
	}
	if err := Unregister(registry, repos[1]); err != nil {
		t.Fatal(err)
	}
	if err := Unregister(registry, repos[1]); err != nil {
		t.Fatalf("unregistering twice: %v", err)
	}
	if got, _ := Registered(registry); len(got) != 2 || slices.Contains(got, repos[1]) {
		t.Errorf("after Unregister: %q", got)
	}
	if got, err := Registered(filepath.Join(t.TempDir(), "none")); err != nil || got != nil {
		t.Errorf("no registry: %q, %v", got, err)
	}
}

// TestRegistryDir: $XDG_STATE_HOME first (only an absolute one, as the
// XDG spec says), else the platform's own place.
func TestRegistryDir(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/xdg/state", "USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`}
	getenv := func(k string) string { return env[k] }
	if d, err := RegistryDir(getenv); err != nil || d != filepath.Join("/xdg/state", "tether", "stores") {
		t.Errorf("with XDG_STATE_HOME: %q, %v", d, err)
	}
	env["XDG_STATE_HOME"] = "relative/state"
	want := map[string]string{
		"linux":   "/home/u/.local/state/tether/stores",
		"freebsd": "/home/u/.local/state/tether/stores",
		"darwin":  "/home/u/Library/Application Support/tether/stores",
		"windows": `C:\Users\u\AppData\Local\tether\stores`,
	}[runtime.GOOS]
	if d, err := RegistryDir(getenv); want != "" && (err != nil || d != filepath.FromSlash(want)) {
		t.Errorf("without an absolute XDG_STATE_HOME: %q, %v; want %q", d, err, want)
	}
	if _, err := RegistryDir(func(string) string { return "" }); err == nil {
		t.Error("no HOME, no XDG_STATE_HOME: a registry anyway")
	}
}

// TestIDs lists the IDs of live and ended sessions from their names.
func TestIDs(t *testing.T) {
	st, _ := newStore(t, Options{})
	if ids, err := st.IDs(); err != nil || ids != nil {
		t.Fatalf("empty store: %q, %v", ids, err)
	}
	for _, id := range []string{"ses_a1", "ses_a2", "b"} {
		if _, err := st.Mutate(id, func(s *Session) error { s.Phase = PhaseIdle; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Mutate("b", func(s *Session) error { s.SetPhase(PhaseEnded); return nil }); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.IDs(); err != nil || !slices.Equal(ids, []string{"b", "ses_a1", "ses_a2"}) {
		t.Fatalf("IDs = %q, %v", ids, err)
	}
}
