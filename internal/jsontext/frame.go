package jsontext

// Frame finds where the first JSON value of a stream ends, fed the stream a
// piece at a time, so that a reader can stop at the end of a value instead
// of waiting for the writer to close. It does not validate: Parse judges
// what it frames. An object, array or string ends at its closing byte;
// any other value at the first byte that cannot continue it.
type Frame struct {
	state frameState
	depth int // open objects and arrays
	n     int // bytes fed before the current piece
}

type frameState uint8

const (
	frameSpace  frameState = iota // before the value
	frameNest                     // inside an object or array, outside strings
	frameString                   // inside a string
	frameEscape                   // after a backslash in a string
	frameScalar                   // inside a number or literal
	frameDone
)

// Next scans p, the bytes of the stream after those already fed, and
// reports whether the first value ends in them and, if so, how many bytes
// of the stream it spans from the start (leading space included). After
// done, Next reports the same again without looking at p. A scalar is only
// known to end at the byte after it, so one at the very end of the stream
// is not done here: the reader takes the end of the stream as its end.
func (f *Frame) Next(p []byte) (end int, done bool) {
	if f.state == frameDone {
		return f.n, true
	}
	for i, c := range p {
		switch f.state {
		case frameSpace:
			switch {
			case isSpace(c):
			case c == '{' || c == '[':
				f.state, f.depth = frameNest, 1
			case c == '"':
				f.state = frameString
			default:
				f.state = frameScalar
			}
		case frameNest:
			switch c {
			case '{', '[':
				f.depth++
			case '}', ']':
				if f.depth--; f.depth == 0 {
					return f.finish(i + 1)
				}
			case '"':
				f.state = frameString
			}
		case frameString:
			switch c {
			case '\\':
				f.state = frameEscape
			case '"':
				if f.depth == 0 {
					return f.finish(i + 1)
				}
				f.state = frameNest
			}
		case frameEscape:
			f.state = frameString
		case frameScalar:
			if isSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || c == '"' {
				return f.finish(i)
			}
		}
	}
	f.n += len(p)
	return 0, false
}

func (f *Frame) finish(i int) (int, bool) {
	f.state, f.n = frameDone, f.n+i
	return f.n, true
}
