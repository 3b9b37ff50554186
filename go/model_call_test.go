package wsfs

import (
	"strings"
	"testing"
)

// TestWithoutContent: the arguments of a large write_file or append_file
// lose their content member, which then goes as a buffer, only when that
// is safe.
func TestWithoutContent(t *testing.T) {
	big := strings.Repeat("line \"quoted\" \\ é\n", bufferedContentArgs/16)
	enc := string(appendJSONString(nil, big))
	for _, args := range []string{
		`{"path":"w.txt","content":` + enc + `}`,
		` { "content" : ` + enc + ` , "path" : "w2.txt" } `,
		`{"path":"a.txt","content":` + enc + `}`,
		`{"path":"w3.txt","content":` + enc + `,"bogus":1}`,
		`{"path":"../w4.txt","content":` + enc + `}`,
	} {
		if rest, ok := withoutContent(args); !ok || strings.Contains(rest, "content") {
			t.Fatalf("withoutContent(%.60s...) = %q, %v", args, rest, ok)
		}
	}
	for _, args := range []string{
		`{"path":"x","content":"a","content":"b"}`, `{"path":"x"}`, `{"path":"x","content":1}`,
		`{"path":"x","content":"\ud83d\ude00"}`, `{"path":"x","content":"a"} x`, `[]`,
	} {
		if _, ok := withoutContent(args); ok {
			t.Errorf("withoutContent(%s) accepted", args)
		}
	}
	if rest, ok := withoutContent(`{"path":"x","content":"a\\\"b"}`); !ok || rest != `{"path":"x"}` {
		t.Errorf("withoutContent = %q, %v", rest, ok)
	}
}
