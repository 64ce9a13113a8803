package install

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// OpenCode and Pi have no hook config: they run plugins (Pi calls them
// extensions) from a directory, inside their own process. Ours is a file of
// its own there, all of it tether's, which runs tether-hook.

//go:embed opencode_plugin.js
var opencodePluginTemplate []byte

//go:embed pi_extension.ts
var piExtensionTemplate []byte

// pluginMarker is the first line of our OpenCode plugin: a file that starts
// with it is ours, whatever version of it.
const pluginMarker = "// tether: records this OpenCode session"

// pluginFile is one agent's plugin: what it is called, the first line
// that marks it as ours, and its text, in which __TETHER_HOOK__ stands for
// the tether-hook to run.
type pluginFile struct {
	what     string // e.g. "opencode plugin"
	display  string // the agent's name, e.g. "OpenCode"
	marker   string
	template []byte
}

// pluginFor is the plugin of an agent whose spec has the plugin layout.
func pluginFor(agent string) pluginFile {
	if agent == "pi" {
		return pluginFile{what: "pi extension", display: "Pi", marker: "// tether: records this Pi session", template: piExtensionTemplate}
	}
	return pluginFile{what: "opencode plugin", display: "OpenCode", marker: pluginMarker, template: opencodePluginTemplate}
}

// render is the plugin running the tether-hook at hookPath ("": found on
// PATH).
func (p pluginFile) render(hookPath string) []byte {
	bin := hookBinary
	if hookPath != "" {
		bin = filepath.ToSlash(hookPath)
	}
	quoted, _ := json.Marshal(bin) // a string always marshals
	return bytes.Replace(p.template, []byte("__TETHER_HOOK__"), quoted, 1)
}

func (p pluginFile) isOurs(data []byte) bool { return bytes.HasPrefix(data, []byte(p.marker)) }

// opencodePlugin is OpenCode's plugin running the tether-hook at hookPath.
func opencodePlugin(hookPath string) []byte { return pluginFor("opencode").render(hookPath) }

// installPlugin writes our plugin, or brings it up to date. A file of the
// same name that is not ours is left alone, with an error.
func (in *installer) installPlugin(p pluginFile, path, manifestPath string) error {
	return in.editFile(manifestPath, path, p.what, 0o644, func(cur []byte, existed bool) ([]byte, error) {
		if existed && !p.isOurs(cur) {
			return nil, fmt.Errorf("the file is not tether's plugin; move it aside and install again")
		}
		return p.render(in.hookPath()), nil
	})
}

// uninstallPlugin removes our plugin, or puts back what was there before
// install (nothing, when the file is not ours: then it stays).
func (in *installer) uninstallPlugin(p pluginFile, path, manifestPath string) error {
	return in.undoFile(manifestPath, path, p.what, func(cur []byte, rec *fileRecord) ([]byte, bool, error) {
		switch {
		case !p.isOurs(cur):
			return cur, false, nil
		case rec != nil && rec.Existed:
			return rec.Original, false, nil
		}
		return nil, true, nil
	})
}

// checkPlugin tells whether the agent will load our plugin and run the
// tether-hook it names: the file is there, readable, ours and up to date.
// (The hook binary itself is checked with the others.)
func (in *installer) checkPlugin(p pluginFile, path string, repair func() error) []Problem {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return []Problem{{What: p.what + " is not installed", Detail: path + " does not exist: " + p.display + " sessions are not recorded.", Fix: repair}}
	case err != nil:
		return []Problem{{What: "cannot read the " + p.what, Detail: err.Error()}}
	case !fi.Mode().IsRegular():
		return []Problem{{What: p.what + " is not a file", Detail: path + " is a " + fi.Mode().Type().String() + "; " + p.display + " cannot load it. Remove it and install again."}}
	}
	data, err := os.ReadFile(path)
	switch {
	case err != nil:
		return []Problem{{What: p.what + " cannot be read", Detail: err.Error() + "; " + p.display + " cannot load it either."}}
	case !p.isOurs(data):
		return []Problem{{What: p.what + " is not tether's", Detail: path + " holds something else; move it aside and install again."}}
	case !bytes.Equal(data, p.render(in.hookPath())):
		return []Problem{{What: p.what + " is out of date", Detail: path, Fix: repair}}
	}
	return nil
}
