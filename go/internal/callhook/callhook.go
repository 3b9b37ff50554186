// Package callhook lets tests run code right before a call reaches the wsfs
// library, whichever package makes the call: the typed API's tests and
// those of the fantasy tools and the agent runner that sit on top of it.
// Nothing outside tests sets it.
package callhook

import "sync/atomic"

// Before, when set, runs right before the library is called, with the tool's
// name. tokenDone is closed once the context's cancellation has been passed
// on to the library's cancel token (nil if the context cannot be cancelled),
// so a test can cancel the context and wait until the call will see it.
var Before atomic.Pointer[func(tool string, tokenDone <-chan struct{})]
