package wsfs

import (
	"encoding/json"
	"fmt"
	"sync"
)

// PackageVersion is this Go module's release, the version of the library it
// is released with (Cargo.toml's [workspace.package] version; make dist tags
// the module "v" + PackageVersion and refuses to when they differ).
// TestPackageVersionIsTheLibrarys checks it against the linked library.
const PackageVersion = "0.1.0"

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
