// Package jsontext reads and writes JSON without reflection, for tether's
// hook: a process that lives a few milliseconds, where encoding/json's
// first use of a type costs more than everything else the hook does (its
// reflection caches and cold code make the first decode or encode of a
// session 200-300 µs in a fresh process; with this package, 15-25 µs).
//
// It promises to be a drop-in replacement, byte for byte, for the parts of
// encoding/json the hook relies on:
//
//   - Parse accepts exactly what json.Unmarshal accepts (json.Valid, with
//     the same nesting limit), and refuses the rest with the same message
//     and offset as encoding/json's *json.SyntaxError.
//   - Value's accessors decode as json.Unmarshal decodes into a string,
//     bool, int, int64, uint64 or time.Time: invalid UTF-8 and unpaired
//     surrogates become U+FFFD, integers must be plain integers that fit,
//     times go through (*time.Time).UnmarshalJSON. The words of a TypeError
//     ("number 1.5", "object", ...) are encoding/json's.
//   - AppendString writes what an encoding/json Encoder with
//     SetEscapeHTML(false) writes for a string, AppendTime what
//     time.Time.MarshalJSON writes, and AppendCompact what json.Compact
//     writes. Numbers and booleans need nothing more than strconv's
//     AppendInt, AppendUint and AppendBool, which write what encoding/json
//     writes.
//
// Frame, which finds where the first value of a stream ends without
// waiting for the stream's end, is the hook's own; it validates nothing and
// leaves that to Parse.
//
// Mapping objects onto Go structs is left to the callers, who know their
// few types; Match and DecodeSlice give them the two rules of
// encoding/json's struct decoding that are easy to get subtly wrong.
package jsontext
