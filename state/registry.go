package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The registry names the stores of this machine, the repositories where
// tether recorded a session, for `status --all-repos`: one small file per
// store in the user's state directory (RegistryDir), named after the
// store's git common dir and holding its path. Registering is a stat when
// done already, else one file written and renamed into place: processes
// registering at once never clash, and nothing is ever read on the hook's
// way but that stat.

// registryName is the registry's directory under the user's state
// directory.
const registryName = "stores"

// RegistryDir is the registry's directory: $XDG_STATE_HOME/tether/stores,
// else the platform's state directory (~/.local/state on Linux and the
// BSDs, ~/Library/Application Support on macOS, %LOCALAPPDATA% on
// Windows). getenv is the environment to read.
func RegistryDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
	}
	if base == "" {
		home := getenv("HOME")
		if runtime.GOOS == "windows" {
			home = getenv("USERPROFILE")
		}
		switch {
		case runtime.GOOS == "windows" && getenv("LOCALAPPDATA") != "":
			base = getenv("LOCALAPPDATA")
		case home == "":
			return "", errors.New("no state directory: neither XDG_STATE_HOME nor HOME is set")
		case runtime.GOOS == "darwin":
			base = filepath.Join(home, "Library", "Application Support")
		case runtime.GOOS == "windows":
			base = filepath.Join(home, "AppData", "Local")
		default:
			base = filepath.Join(home, ".local", "state")
		}
	}
	return filepath.Join(base, "tether", registryName), nil
}

// registryEntry is the file that registers commonDir.
func registryEntry(registry, commonDir string) (string, string, error) {
	abs, err := filepath.Abs(commonDir)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(registry, hex.EncodeToString(sum[:16])), abs, nil
}

// Register adds the store of the repository whose git common dir is
// commonDir to the registry, unless it is there already: then it costs
// one stat.
func Register(registry, commonDir string) error {
	entry, abs, err := registryEntry(registry, commonDir)
	if err != nil {
		return fmt.Errorf("register %s: %w", commonDir, err)
	}
	if _, err := os.Stat(entry); err == nil {
		return nil
	}
	if err := os.MkdirAll(registry, 0o700); err != nil {
		return fmt.Errorf("register %s: %w", commonDir, err)
	}
	f, err := os.CreateTemp(registry, ".new-*")
	if err != nil {
		return fmt.Errorf("register %s: %w", commonDir, err)
	}
	_, err = f.WriteString(abs + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), entry)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("register %s: %w", commonDir, err)
	}
	if err := syncPath(registry); err != nil {
		return fmt.Errorf("register %s: %w", commonDir, err)
	}
	return nil
}

// Registered lists the git common dirs of the registered stores, sorted.
// An entry that does not read as one is skipped.
func Registered(registry string) ([]string, error) {
	entries, err := os.ReadDir(registry)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the registry of stores: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(registry, e.Name()))
		if err != nil {
			continue
		}
		dir := strings.TrimSpace(string(data))
		if want, _, err := registryEntry(registry, dir); err != nil || filepath.Base(want) != e.Name() {
			continue // not an entry this registry wrote
		}
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	return dirs, nil
}

// Unregister takes the store of commonDir out of the registry.
func Unregister(registry, commonDir string) error {
	entry, _, err := registryEntry(registry, commonDir)
	if err == nil {
		err = os.Remove(entry)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unregister %s: %w", commonDir, err)
	}
	return nil
}
