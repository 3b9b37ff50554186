package wsfs

import "testing"

// dataKinds are the kinds of data the fast reader decodes an envelope's
// data into: none (skipped), each typed result it knows, and the data's
// JSON text (rawData, which callTyped decodes with json v2).
var dataKinds = []func() any{
	func() any { return nil },
	func() any { return new(ReadFileResult) },
	func() any { return new(WriteFileResult) },
	func() any { return new(AppendFileResult) },
	func() any { return new(ListDirResult) },
	func() any { return new(EditFileResult) },
	func() any { return new(rawData) },
}

// FuzzReaderMatchesEncodingJSON: whatever the input, the hand-written reader
// either gives up (parseEnvelope then decodes with encoding/json) or
// decodes exactly what encoding/json decodes, into every kind of data: the
// same envelope, the same data, and nothing encoding/json refuses. Plain
// `go test` runs the seeds: the library's own envelopes, the cases of
// TestDecoderMatchesEncodingJSON, and any failure `go test -fuzz
// FuzzReaderMatchesEncodingJSON` finds (it saves them in
// testdata/fuzz/FuzzReaderMatchesEncodingJSON).
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for _, c := range decodeCases(f) {
		f.Add(jsonPart(c))
	}
	for _, c := range readerDecodes {
		f.Add(c.js)
	}
	for _, js := range readerRefuses {
		f.Add(js)
	}
	f.Fuzz(func(t *testing.T, js string) {
		for _, newData := range dataKinds {
			compareAny(t, js, newData)
		}
	})
}
