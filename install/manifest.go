package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tetherdev/tether/internal/durable"
)

// manifest remembers, for every file install changed outside the git hooks
// directory, whether it existed and what it held before. That is what lets
// an uninstall delete the files and directories we created and put the
// others back byte for byte — and tell a setting we added from the same
// setting written by the user.
type manifest struct {
	path        string
	Files       map[string]*fileRecord `json:"files"`
	CreatedDirs []string               `json:"created_dirs,omitempty"` // made for the manifest itself, outermost first
	Setup       *Setup                 `json:"setup,omitempty"`        // in the project's record only
}

type fileRecord struct {
	Existed     bool     `json:"existed"`
	Original    []byte   `json:"original,omitempty"`     // content before install, when it existed
	CreatedDirs []string `json:"created_dirs,omitempty"` // directories install created for it, outermost first
}

// projectManifest is kept with tether's state, in the common dir, so every
// worktree of a clone shares it.
func projectManifest(r repo) string {
	return filepath.Join(r.common, "tether", "install.json")
}

// userManifest records user-level configs, which belong to no repository.
func userManifest(home string) string {
	return filepath.Join(home, ".config", "tether", "install.json")
}

func loadManifest(path string) (*manifest, error) {
	m := &manifest{path: path, Files: map[string]*fileRecord{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read install record: %w", err)
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("read install record %s: %w", path, err)
	}
	if m.Files == nil {
		m.Files = map[string]*fileRecord{}
	}
	return m, nil
}

// save writes the manifest, or removes it (and the directories made for
// it) once it records nothing.
func (m *manifest) save() error {
	if len(m.Files) == 0 && m.Setup == nil {
		if err := os.Remove(m.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove install record: %w", err)
		}
		removeEmptyDirs(m.CreatedDirs)
		return nil
	}
	created, err := mkdirAll(filepath.Dir(m.path), 0o700)
	if err != nil {
		return fmt.Errorf("save install record: %w", err)
	}
	if m.CreatedDirs == nil {
		m.CreatedDirs = created
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("save install record: %w", err)
	}
	return durable.WriteFile(m.path, append(data, '\n'), 0o600)
}
