package gitdir

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

func FuzzParseGitFile(f *testing.F) {
	for _, s := range []string{"gitdir: ../.git/modules/a\n", "gitdir: /x\r\n", "gitdir: \n", "nope"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseGitFile(data)
		if err != nil {
			return
		}
		if p == "" || strings.ContainsRune(p, 0) || strings.HasSuffix(p, "\n") || strings.HasSuffix(p, "\r") {
			t.Fatalf("parseGitFile(%q) = %q", data, p)
		}
		// What git would write for p reads back as p.
		again, err := parseGitFile([]byte("gitdir: " + p + "\n"))
		if err != nil || again != p {
			t.Fatalf("round trip of %q: %q, %v", p, again, err)
		}
	})
}

func FuzzParseCoreConfig(f *testing.F) {
	f.Add([]byte("[core]\n\tbare = true\n\tworktree = \"a b\" ; c\n"), "x")
	f.Add([]byte("[core \"s\"]\nbare\n[core]\nworktree=a\\\nb\n"), "with \"quotes\" \\ and\ttab")
	f.Fuzz(func(t *testing.T, data []byte, value string) {
		// Arbitrary input must not panic.
		_, _ = parseCoreConfig(data)
		// A value quoted the way git writes it reads back unchanged.
		if strings.ContainsRune(value, 0) {
			return
		}
		var b strings.Builder
		b.WriteString("[core]\n\tbare = off\n\tworktree = \"")
		for _, c := range []byte(value) {
			switch c {
			case '\\', '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString("\"\n")
		cfg, err := parseCoreConfig([]byte(b.String()))
		if err != nil || cfg.worktree != value || cfg.bare {
			t.Fatalf("quoted %q: got %+v, %v", value, cfg, err)
		}
	})
}

func FuzzParseRefFile(f *testing.F) {
	for _, s := range []string{"ref: refs/heads/main\n", "0123456789abcdef0123456789abcdef01234567\n", "ref: refs/../x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		target, hash, err := parseRefFile(data)
		if err != nil {
			return
		}
		switch {
		case target != "" && hash == "":
			if checkRefName(target) != nil || strings.Contains(target, "..") {
				t.Fatalf("accepted bad ref %q", target)
			}
		case target == "" && hash != "":
			if !validHash([]byte(hash)) || strings.ToLower(hash) != hash {
				t.Fatalf("accepted bad hash %q", hash)
			}
		default:
			t.Fatalf("parseRefFile(%q) = %q, %q", data, target, hash)
		}
	})
}

func FuzzLookupPackedRef(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n1111111111111111111111111111111111111111 refs/heads/main\n"), "refs/heads/main", "a\nb")
	f.Fuzz(func(t *testing.T, data []byte, name, names string) {
		if hash, found, err := lookupPackedRef(bytes.NewReader(data), name); err == nil && found && !validHash([]byte(hash)) {
			t.Fatalf("found %s with bad hash %q", name, hash)
		}
		// A file written like git writes it finds every ref it holds.
		refs := map[string]bool{}
		for _, n := range strings.Split(names, "\n") {
			if n != "" && !strings.ContainsAny(n, "\r") {
				refs["refs/heads/"+n] = true
			}
		}
		sorted := make([]string, 0, len(refs))
		for r := range refs {
			sorted = append(sorted, r)
		}
		sort.Strings(sorted)
		var b strings.Builder
		b.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
		for i, r := range sorted {
			b.WriteString(strings.Repeat(string("0123456789abcdef"[i%16]), 40) + " " + r + "\n")
		}
		for i, r := range sorted {
			hash, found, err := lookupPackedRef(strings.NewReader(b.String()), r)
			if err != nil || !found || hash != strings.Repeat(string("0123456789abcdef"[i%16]), 40) {
				t.Fatalf("lookup %q in\n%s: %q, %v, %v", r, b.String(), hash, found, err)
			}
		}
	})
}
