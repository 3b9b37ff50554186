package wsfs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSkipStringMatchesEncodingJSONAtEveryOffset: skipString reads plain
// bytes eight at a time, so every byte that must stop it (a quote, a
// backslash, a control character) and every byte that must not (the bytes
// next to them in value, UTF-8) is placed at each offset of a word, in
// strings of every length around a word's, and the verdict is compared
// with encoding/json's.
func TestSkipStringMatchesEncodingJSONAtEveryOffset(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `\\`, `\n`, `\u00e9`, `\ud83d`, `\x`, "\x00", "\x01", "\x1f",
		" ", "!", "#", "[", "]", "\x7f", "é", "\xff", "\x80", "\x21", "\x5b", "\x5d", "\x22\x22"}
	for _, sp := range specials {
		for before := 0; before <= 17; before++ {
			for after := 0; after <= 9; after++ {
				body := strings.Repeat("a", before) + sp + strings.Repeat("b", after)
				for _, tail := range []string{`"`, `",1`, ``} {
					js := `"` + body + tail
					d := decoder{s: js}
					d.skipString()
					// What encoding/json says of the string alone: the longest
					// prefix of js that is one valid JSON string.
					want, wantEnd := -1, 0
					for end := len(js); end > 0; end-- {
						var v string
						if json.Unmarshal([]byte(js[:end]), &v) == nil {
							want, wantEnd = 1, end
							break
						}
					}
					got := 1
					if d.bad {
						got = -1
					}
					if got != want || (got == 1 && d.i != wantEnd) {
						t.Fatalf("skipString(%q): ok %v at %d; encoding/json: ok %v at %d",
							js, got == 1, d.i, want == 1, wantEnd)
					}
				}
			}
		}
	}
}
