package mockllm

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestQuestionCall fills a question tool's arguments from its schema:
// Codex's request_user_input (testdata: the schema Codex 0.169 sends),
// and a schema shaped like Claude Code's AskUserQuestion.
func TestQuestionCall(t *testing.T) {
	codex, err := os.ReadFile("testdata/request_user_input.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	claude := `{"type":"object","required":["questions"],"properties":{"questions":{"type":"array","minItems":1,"items":{"type":"object",
		"required":["question","header","options","multiSelect"],"properties":{"question":{"type":"string"},"header":{"type":"string"},
		"multiSelect":{"type":"boolean"},"options":{"type":"array","minItems":2,"items":{"type":"object","required":["label","description"],
		"properties":{"label":{"type":"string"},"description":{"type":"string"}}}}}}}}}`
	options := []any{map[string]any{"label": "a.txt", "description": "Writes it"}, map[string]any{"label": "b.txt", "description": "Writes it"}}
	for _, tc := range []struct {
		offered map[string]json.RawMessage
		name    string
		want    map[string]any
	}{
		{map[string]json.RawMessage{"exec_command": nil, "request_user_input": codex}, "request_user_input",
			map[string]any{"questions": []any{map[string]any{"id": "file", "header": "File", "question": Question, "options": options}}}},
		{map[string]json.RawMessage{"AskUserQuestion": json.RawMessage(claude)}, "AskUserQuestion",
			map[string]any{"questions": []any{map[string]any{"header": "File", "question": Question, "multiSelect": false, "options": options}}}},
		{map[string]json.RawMessage{"ask_user": json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"choices":{"type":"array","items":{"type":"string"}}}}`)}, "ask_user",
			map[string]any{"question": Question, "choices": []any{"a.txt", "b.txt"}}},
	} {
		name, args, ok := questionCall(tc.offered)
		if !ok || name != tc.name || !reflect.DeepEqual(args, tc.want) {
			t.Errorf("questionCall(%v) = %q, %v, %v; want %q, %v", tc.offered, name, args, ok, tc.name, tc.want)
		}
	}
	if _, _, ok := questionCall(map[string]json.RawMessage{"bash": nil}); ok {
		t.Error("a question asked through a tool that is not one")
	}
}
