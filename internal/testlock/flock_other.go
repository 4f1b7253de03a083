//go:build !unix

package testlock

import "os"

// Without flock the timed tests run unserialised.
func lock(*os.File) error { return nil }

func unlock(*os.File) {}
