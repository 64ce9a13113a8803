package checkpoint

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tetherdev/tether/redact"
)

// BenchmarkCondense measures condensing one more checkpoint (one turn) on
// a branch already holding 10, 1,000 and 10,000 checkpoints. The sparse
// tree update keeps the cost flat: compare the ns/op of the sizes.
func BenchmarkCondense(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("branch=%d", n), func(b *testing.B) {
			f := newFixture(b)
			prebuild(b, f, n)
			a := f.agent(b, "bench")
			a.write(`{"type":"summary"}`)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				a.turn("one more turn")
				b.StartTimer()
				if res := f.condense(b, "bench"); len(res) != 1 || res[0].Skipped {
					b.Fatalf("Condense = %+v", res)
				}
			}
		})
	}
}

// BenchmarkCondenseTranscript prices redaction: condensing one turn whose
// transcript slice is 4 MiB of JSON lines (a GitHub token every 2,000
// lines), with the slice streamed through the redactor ("redact") and
// through a plain copy ("plain-copy"). MB/s is per MB of transcript.
func BenchmarkCondenseTranscript(b *testing.B) {
	var part strings.Builder
	for i := 0; part.Len() < 1<<20; i++ {
		fmt.Fprintf(&part, `{"type":"assistant","uuid":"%08d","message":{"content":[{"type":"text","text":"Edited cmd/sweep/push.go: the remote defaults to the upstream of the current branch, step %d."}]}}`+"\n", i, i)
		if i%2000 == 0 {
			fmt.Fprintf(&part, `{"type":"tool_result","content":"export GITHUB_TOKEN=%s"}`+"\n", fakeGitHubToken())
		}
	}
	line := strings.TrimSuffix(part.String(), "\n")
	const parts = 4
	for _, mode := range []string{"redact", "plain-copy"} {
		b.Run(mode, func(b *testing.B) {
			f := newFixture(b)
			if mode == "plain-copy" {
				f.repo.copyRedacted = func(dst io.Writer, src io.Reader) (redact.Counts, int64, error) {
					n, err := io.Copy(dst, src)
					return nil, n, err
				}
			}
			a := f.agent(b, "bench")
			b.SetBytes(int64(parts * part.Len()))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				a.turnStart("big turn")
				for range parts {
					a.write(line)
				}
				a.turnEnd()
				b.StartTimer()
				if res := f.condense(b, "bench"); len(res) != 1 || res[0].Skipped {
					b.Fatalf("Condense = %+v", res)
				}
			}
		})
	}
}
