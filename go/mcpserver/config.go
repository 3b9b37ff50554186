package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// WorkspaceConfig builds the configuration for wsfs.OpenJSON from the
// contents of a --config file (nil: none) and --root ("": keep the file's
// root). The file is the library's workspace configuration, a JSON object
// ({"root", "restrict_to_workspace", "limits", ...}); every key other than
// "root" is passed through as written, so keys the library gains later
// need no change here and the library reports any it does not know.
//
// This is the one place the server's workspace configuration is made.
func WorkspaceConfig(file []byte, root string) ([]byte, error) {
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(file)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(file))
		if err := dec.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("the config file must hold one JSON object (the wsfs workspace configuration): %w", err)
		}
		if dec.More() {
			return nil, errors.New("the config file must hold one JSON object, found more after it")
		}
		if cfg == nil { // the file said null
			cfg = map[string]json.RawMessage{}
		}
	}
	if root != "" {
		b, err := json.Marshal(root)
		if err != nil {
			return nil, err
		}
		cfg["root"] = b
	}
	if _, ok := cfg["root"]; !ok {
		return nil, errors.New("no workspace root: give --root DIR or a \"root\" in the config file")
	}
	return json.Marshal(cfg)
}

// ReadOnlyConfig returns cfg (a WorkspaceConfig result) with the policy's
// "writes_enabled" set to false, keeping the policy's other keys. With
// --read-only the server offers only read-only tools; this makes the
// library refuse changes too (writes_disabled), so a read-only server
// cannot write even if a changing tool were somehow reached.
func ReadOnlyConfig(cfg []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &top); err != nil {
		return nil, err
	}
	policy := map[string]json.RawMessage{}
	if raw, ok := top["policy"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &policy); err != nil {
			return nil, fmt.Errorf("the config's \"policy\" must be a JSON object: %w", err)
		}
	}
	policy["writes_enabled"] = json.RawMessage("false")
	b, err := json.Marshal(policy)
	if err != nil {
		return nil, err
	}
	top["policy"] = b
	return json.Marshal(top)
}
