package checkpoint

import (
	"reflect"
	"strings"
	"testing"
)

func TestChunkCuts(t *testing.T) {
	long := strings.Repeat("x", 3*newlineScan) + "\n"
	tests := []struct {
		name           string
		data           string
		from, to, max_ int64
		want           []int64
	}{
		{"fits", "a\nb\n", 0, 4, 10, []int64{4}},
		{"empty slice", "a\nb\n", 2, 2, 10, []int64{2}},
		{"cut after the last newline in the chunk", "aa\nbb\ncc\ndd\n", 0, 12, 7, []int64{6, 12}},
		{"slice inside the file", "aa\nbb\ncc\ndd\n", 3, 12, 4, []int64{6, 9, 12}},
		{"a line longer than a chunk is cut mid-line", "abcdefgh\nij\n", 0, 12, 4, []int64{4, 8, 12}},
		{"newline found across scan blocks", "a\n" + long + "b\n", 0, int64(len(long)) + 4, int64(len(long)) + 1, []int64{2, int64(len(long)) + 2, int64(len(long)) + 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chunkCuts(strings.NewReader(tt.data), tt.from, tt.to, tt.max_)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chunkCuts = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzChunkCuts(f *testing.F) {
	f.Add("aa\nbb\ncc\n", uint16(0), uint16(9), uint16(4))
	f.Add("no newline at all", uint16(2), uint16(15), uint16(3))
	f.Fuzz(func(t *testing.T, data string, from, to, max_ uint16) {
		n := int64(len(data))
		lo, hi, m := int64(from)%(n+1), int64(to)%(n+1), int64(max_)%64+1
		if lo > hi {
			lo, hi = hi, lo
		}
		cuts, err := chunkCuts(strings.NewReader(data), lo, hi, m)
		if err != nil {
			t.Fatal(err)
		}
		if cuts[len(cuts)-1] != hi {
			t.Fatalf("last cut %d, want %d", cuts[len(cuts)-1], hi)
		}
		prev := lo
		for i, c := range cuts {
			if c-prev > m || (c <= prev && !(i == 0 && lo == hi)) {
				t.Fatalf("cuts %v of [%d,%d) max %d: piece %d is %d bytes", cuts, lo, hi, m, i, c-prev)
			}
			// A piece that is not the last ends a line unless it has no
			// newline at all.
			if i < len(cuts)-1 && data[c-1] != '\n' && strings.Contains(data[prev:c], "\n") {
				t.Fatalf("cuts %v: piece %d ends mid-line although it holds a newline", cuts, i)
			}
			prev = c
		}
	})
}
