package gitdir

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// ConfigValue reads one setting the way git resolves it — system, global,
// repository, then worktree configuration, the last one wins — by parsing
// the files rather than running git, for callers on a budget of a few
// milliseconds. Section and key match case-insensitively; a subsection
// ("remote.origin.url") is given as "remote.origin" and matches exactly.
// include.path directives are not followed.
func ConfigValue(r Repo, getenv func(string) string, section, key string) (string, bool) {
	values, _ := ConfigValues(r, getenv, section, key)
	if len(values) == 0 {
		return "", false
	}
	return values[len(values)-1], true
}

// ConfigValues reads a setting that may be given many times, every value
// in the order `git config --get-all` lists them, from the same files as
// ConfigValue. includes reports that one of the files includes others
// (include.path, includeIf), which are not followed: a caller that must
// not miss a value (one that keeps secrets out) then asks git.
func ConfigValues(r Repo, getenv func(string) string, section, key string) (values []string, includes bool) {
	for _, f := range configFiles(r, getenv) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, inc := parseConfigValues(string(data), section, key)
		values, includes = append(values, v...), includes || inc
	}
	return values, includes
}

func configFiles(r Repo, getenv func(string) string) []string {
	var files []string
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		home, xdg := getenv("HOME"), getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	return append(files, filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree"))
}

// parseConfigValue finds the last value of section.key in one config file.
// A key with no "=" is a boolean true, as in git.
func parseConfigValue(text, section, key string) (string, bool) {
	values, _ := parseConfigValues(text, section, key)
	if len(values) == 0 {
		return "", false
	}
	return values[len(values)-1], true
}

// parseConfigValues finds every value of section.key in one config file,
// and whether the file includes others.
func parseConfigValues(text, section, key string) (values []string, includes bool) {
	wantSec, wantSub, hasSub := strings.Cut(section, ".")
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				in = false
				continue
			}
			header := line[1:end]
			sec, sub, quoted := strings.Cut(header, " ")
			if quoted {
				sub = strings.Trim(strings.TrimSpace(sub), `"`)
			} else if s, ss, dotted := strings.Cut(header, "."); dotted {
				sec, sub, quoted = s, ss, true // deprecated [section.subsection]
			}
			includes = includes || strings.EqualFold(sec, "include") || strings.EqualFold(sec, "includeIf")
			in = strings.EqualFold(sec, wantSec) && quoted == hasSub && (!hasSub || sub == wantSub)
			rest := strings.TrimSpace(line[end+1:])
			if !in || rest == "" {
				continue
			}
			line = rest // "[tether] staleAfter = 1h" on one line
		}
		if !in {
			continue
		}
		name, raw, hasValue := strings.Cut(line, "=")
		if !strings.EqualFold(strings.TrimSpace(name), key) {
			continue
		}
		if !hasValue {
			values = append(values, "true")
			continue
		}
		values = append(values, unquoteConfig(strings.TrimSpace(raw)))
	}
	return values, includes
}

// unquoteConfig drops quotes, backslash escapes and a trailing comment.
func unquoteConfig(raw string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(raw):
			i++
			switch raw[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(raw[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
