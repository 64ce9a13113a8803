package state

import "github.com/tetherdev/tether/internal/jsontext"

// Turn records are encoded and decoded by hand like session files (see
// sessionjson.go), byte for byte as encoding/json would.

// encodeTurn writes a turn record as one JSON line, without the newline.
func encodeTurn(r TurnRecord) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 160+len(r.Prompt))}
	e.open("")
	e.str("t", r.T)
	e.int("turn", int64(r.Turn))
	e.time("at", r.At)
	if r.Prompt != "" {
		e.str("prompt", r.Prompt)
	}
	if r.Head != "" {
		e.str("head", r.Head)
	}
	e.int("transcript_size", r.TranscriptSize)
	if r.Owner != nil {
		e.identity("owner", r.Owner)
	}
	if r.Key != "" {
		e.str("key", r.Key)
	}
	if r.Error != "" {
		e.str("error", r.Error)
	}
	if r.Spool != "" {
		e.str("spool", r.Spool)
	}
	return e.close()
}

var turnNames = []string{"t", "turn", "at", "prompt", "head", "transcript_size", "owner", "key", "error", "spool"}

// decodeTurn reads one line of a turn log as json.Unmarshal reads it into
// a TurnRecord: null is the zero record, unknown keys are skipped.
func decodeTurn(line []byte) (TurnRecord, error) {
	var r TurnRecord
	v, err := jsontext.Parse(line)
	if err != nil {
		return r, err
	}
	err = decodeObject(v, "state.TurnRecord", turnNames, func(name string, v jsontext.Value) error {
		switch name {
		case "t":
			return decodeString(&r.T, v)
		case "turn":
			return decodeInt(&r.Turn, v)
		case "at":
			return decodeTime(&r.At, v)
		case "prompt":
			return decodeString(&r.Prompt, v)
		case "head":
			return decodeString(&r.Head, v)
		case "transcript_size":
			return decodeInt64(&r.TranscriptSize, v)
		case "owner":
			return decodePointer(&r.Owner, v, decodeIdentity)
		case "key":
			return decodeString(&r.Key, v)
		case "error":
			return decodeString(&r.Error, v)
		case "spool":
			return decodeString(&r.Spool, v)
		}
		return nil
	}, nil)
	if err != nil {
		return TurnRecord{}, err
	}
	return r, nil
}
