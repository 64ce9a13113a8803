package install

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// OpenCode has no hook config: it runs JS plugins from .opencode/plugins/
// (~/.config/opencode/plugins/ for the user), inside its own process. Ours
// is a file of its own, all of it tether's.

//go:embed opencode_plugin.js
var opencodePluginTemplate []byte

// pluginMarker is the first line of our plugin: a file that starts with it
// is ours, whatever version of it.
const pluginMarker = "// tether: records this OpenCode session"

// opencodePlugin is the plugin that runs the tether-hook at hookPath ("":
// found on PATH).
func opencodePlugin(hookPath string) []byte {
	bin := hookBinary
	if hookPath != "" {
		bin = filepath.ToSlash(hookPath)
	}
	quoted, _ := json.Marshal(bin) // a string always marshals
	return bytes.Replace(opencodePluginTemplate, []byte("__TETHER_HOOK__"), quoted, 1)
}

func isOurPlugin(data []byte) bool { return bytes.HasPrefix(data, []byte(pluginMarker)) }

// installPlugin writes our plugin, or brings it up to date. A file of the
// same name that is not ours is left alone, with an error.
func (in *installer) installPlugin(path, manifestPath string) error {
	return in.editFile(manifestPath, path, "opencode plugin", 0o644, func(cur []byte, existed bool) ([]byte, error) {
		if existed && !isOurPlugin(cur) {
			return nil, fmt.Errorf("the file is not tether's plugin; move it aside and install again")
		}
		return opencodePlugin(in.hookPath()), nil
	})
}

// uninstallPlugin removes our plugin, or puts back what was there before
// install (nothing, when the file is not ours: then it stays).
func (in *installer) uninstallPlugin(path, manifestPath string) error {
	return in.undoFile(manifestPath, path, "opencode plugin", func(cur []byte, rec *fileRecord) ([]byte, bool, error) {
		switch {
		case !isOurPlugin(cur):
			return cur, false, nil
		case rec != nil && rec.Existed:
			return rec.Original, false, nil
		}
		return nil, true, nil
	})
}

// checkPlugin tells whether OpenCode will load our plugin and run the
// tether-hook it names: the file is there, readable, ours and up to date.
// (The hook binary itself is checked with the others.)
func (in *installer) checkPlugin(path string, repair func() error) []Problem {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return []Problem{{What: "opencode plugin is not installed", Detail: path + " does not exist: OpenCode sessions are not recorded.", Fix: repair}}
	case err != nil:
		return []Problem{{What: "cannot read the opencode plugin", Detail: err.Error()}}
	case !fi.Mode().IsRegular():
		return []Problem{{What: "opencode plugin is not a file", Detail: path + " is a " + fi.Mode().Type().String() + "; OpenCode cannot load it. Remove it and install again."}}
	}
	data, err := os.ReadFile(path)
	switch {
	case err != nil:
		return []Problem{{What: "opencode plugin cannot be read", Detail: err.Error() + "; OpenCode cannot load it either."}}
	case !isOurPlugin(data):
		return []Problem{{What: "opencode plugin is not tether's", Detail: path + " holds something else; move it aside and install again."}}
	case !bytes.Equal(data, opencodePlugin(in.hookPath())):
		return []Problem{{What: "opencode plugin is out of date", Detail: path, Fix: repair}}
	}
	return nil
}
