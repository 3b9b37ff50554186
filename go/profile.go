package wsfs

import "encoding/json"

// EnvelopeFailed tells whether an envelope CallRaw returned reports a
// failure, whatever its shape: the native one ({"ok": false, "error":
// {"code", ...}}) or a profile's (every profile's envelope has "ok" or
// "success"). code is the library's own error code when the envelope is the
// native one (a closed workspace is answered natively, whatever the
// profile), else "". An envelope that does not parse counts as a failure.
func EnvelopeFailed(envelopeJSON string) (failed bool, code Code) {
	var env struct {
		OK      *bool           `json:"ok"`
		Success *bool           `json:"success"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(envelopeJSON), &env) != nil {
		return true, ""
	}
	var native struct {
		Code Code `json:"code"`
	}
	_ = json.Unmarshal(env.Error, &native) // a profile's "error" may be a plain string
	return (env.OK != nil && !*env.OK) || (env.Success != nil && !*env.Success), native.Code
}
