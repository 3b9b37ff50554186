package wsfs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchWithout times withoutContent on the arguments of a 1 MiB write_file
// made of line(0), line(1), ... (`go test -run X -bench WithoutContent`).
func benchWithout(b *testing.B, line func(i int) string) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20-200; i++ {
		sb.WriteString(line(i))
	}
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": sb.String()})
	s := string(args)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, ok := withoutContent(s); !ok {
			b.Fatal("not ok")
		}
	}
}

// Code-like content: an escape every 10-20 bytes.
func BenchmarkWithoutContent1MiBCode(b *testing.B) {
	benchWithout(b, func(int) string { return "line of some code with \"quotes\" and\ttabs and filler text 0123456789\n" })
}

// make bench's write_1m content: an escape (the newline) every 72 bytes.
func BenchmarkWithoutContent1MiBText(b *testing.B) {
	benchWithout(b, func(i int) string {
		return fmt.Sprintf("%07d the quick brown fox jumps over the lazy dog; wsfs benchmark text\n", i)
	})
}
