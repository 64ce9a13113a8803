package mockllm

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Question is what an [[ask]] turn asks the agent's user.
const Question = "Which file shall I write?"

// questionTools are the tools the agents offer their model to ask the user
// a question: Claude Code's, Copilot CLI's and Gemini CLI's, OpenCode's,
// Codex's (in Plan mode only).
var questionTools = []string{"AskUserQuestion", "ask_user", "question", "request_user_input"}

// questionCall picks the question tool among the offered ones (name →
// JSON schema of its input) and fills in its arguments from that schema:
// one question, Question, with two options. ok is false when the request
// offers none.
func questionCall(offered map[string]json.RawMessage) (name string, args map[string]any, ok bool) {
	for _, n := range questionTools {
		raw, found := offered[n]
		if !found {
			continue
		}
		var schema map[string]any
		_ = json.Unmarshal(raw, &schema) // a schema that does not parse gets empty arguments
		args, _ := fill("", schema, 0).(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		return n, args, true
	}
	return "", nil, false
}

// fill makes a value for the schema of the property named key (the i-th
// element of its array, when in one): the required properties of an
// object, one question or two options in an array, words that read as a
// question and its options for strings.
func fill(key string, schema map[string]any, i int) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch typ, _ := schema["type"].(string); typ {
	case "object", "":
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			return map[string]any{}
		}
		var names []string
		for _, r := range asSlice(schema["required"]) {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
		for _, n := range []string{"question", "questions", "message", "options", "choices"} {
			if _, ok := props[n]; ok && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		obj := map[string]any{}
		for _, n := range names {
			if p, ok := props[n].(map[string]any); ok {
				obj[n] = fill(n, p, i)
			}
		}
		return obj
	case "array":
		items, _ := schema["items"].(map[string]any)
		n := 1
		if key == "options" || key == "choices" {
			n = 2
		}
		if m, ok := schema["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		arr := make([]any, n)
		for j := range arr {
			arr[j] = fill(key, items, j)
		}
		return arr
	case "boolean":
		return false
	case "integer", "number":
		return 1
	}
	switch key {
	case "question", "message":
		return Question
	case "header":
		return "File"
	case "id":
		return "file"
	case "options", "choices", "label":
		return fmt.Sprintf("%c.txt", 'a'+i)
	}
	return "Writes it"
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
