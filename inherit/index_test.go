package inherit

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The index reads back what it wrote; a foreign or damaged file is empty,
// never an error that would stop the hooks.
func TestIndexRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links", "index")
	ix := &index{notes: strings.Repeat("a", 40), entries: map[string]*Entry{
		strings.Repeat("1", 40): {Commit: strings.Repeat("1", 40), Tree: strings.Repeat("2", 40), PatchID: strings.Repeat("3", 40),
			Base: strings.Repeat("4", 40), Change: strings.Repeat("5", 40), IDs: []string{"0a1b2c3d4e5f6a7b", "8c9d0e1f2a3b4c5d"}},
		strings.Repeat("6", 40): {Commit: strings.Repeat("6", 40)}, // not here yet
	}}
	if err := ix.write(path); err != nil {
		t.Fatal(err)
	}
	got, err := readIndex(path)
	if err != nil || !reflect.DeepEqual(got, ix) {
		t.Fatalf("readIndex = %+v, %v; want %+v", got, err, ix)
	}
	if err := os.WriteFile(path, []byte("something else\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := readIndex(path); err != nil || len(got.entries) != 0 {
		t.Fatalf("a foreign file: %+v, %v", got, err)
	}
}

// Two changes are named alike only when every path has the same content
// before and after, whatever order git listed them in.
func TestChangeID(t *testing.T) {
	a := ":000000 100644 0000000000000000000000000000000000000000 0cfbf08886fca9a91cb753ec8734c84fcbe52c9f A\tb"
	m := ":100644 100644 d00491fd7e5bb6fa28c517a0bb32b8b506539d4d 00750edc07d6415dcc07ae0351e9397b0222b7ba M\ta"
	m2 := ":100644 100644 e00491fd7e5bb6fa28c517a0bb32b8b506539d4d 00750edc07d6415dcc07ae0351e9397b0222b7ba M\ta"
	if changeID([]string{a, m}) != changeID([]string{m, a}) {
		t.Error("the order of the lines matters")
	}
	if changeID([]string{a, m}) == changeID([]string{a, m2}) || changeID([]string{a, m}) == changeID([]string{a}) {
		t.Error("different changes named alike")
	}
	if changeID(nil) != "" {
		t.Error("no change has a name")
	}
}

func FuzzReadIndex(f *testing.F) {
	f.Add([]byte(indexHeader + "\nnotes -\n" + strings.Repeat("1", 40) + " - - - - -\n"))
	f.Add([]byte(indexHeader + "\n" + strings.Repeat("1", 40) + " t p b c a,b\nnotes x y\n"))
	dir := f.TempDir() // one per process; its inputs run one at a time
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "index")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, err := readIndex(path)
		if err != nil {
			return
		}
		// What it read, written and read again, is the same.
		again := filepath.Join(dir, "again")
		if err := ix.write(again); err != nil {
			t.Fatal(err)
		}
		back, err := readIndex(again)
		if err != nil || len(back.entries) != len(ix.entries) || back.notes != ix.notes {
			t.Fatalf("read %+v, wrote and read back %+v, %v", ix, back, err)
		}
	})
}
