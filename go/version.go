package wsfs

import (
	"encoding/json"
	"fmt"
	"sync"
)

// ABIVersion is the C ABI version this package is written against. Open
// refuses a library whose wsfs_version() reports another "abi" number.
const ABIVersion = 1

// VersionInfo is the library's wsfs_version().
type VersionInfo struct {
	Version string `json:"version"`
	ABI     int    `json:"abi"`
}

var versionOnce = sync.OnceValues(func() (VersionInfo, error) { return checkABI(cVersion()) })

// Version returns the linked library's version. It fails with
// *ABIMismatchError if the library's ABI is not ABIVersion.
func Version() (VersionInfo, error) { return versionOnce() }

func checkABI(versionJSON string) (VersionInfo, error) {
	var v VersionInfo
	if err := json.Unmarshal([]byte(versionJSON), &v); err != nil {
		return v, fmt.Errorf("wsfs: malformed wsfs_version() %q: %w", versionJSON, err)
	}
	if v.ABI != ABIVersion {
		return v, &ABIMismatchError{Want: ABIVersion, Got: v.ABI, LibraryVersion: v.Version}
	}
	return v, nil
}
