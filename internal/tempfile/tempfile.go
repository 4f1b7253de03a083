// Package tempfile creates the temporary files that outputs are written through before they are
// renamed or linked into place.
//
// os.CreateTemp creates its file with mode 0600, which the rename then gives the report: a CSV
// or HTML page that only its writer can read, whatever the user's umask says. Create opens the
// file as os.Create does, mode 0666 less the umask, so that the output's mode is what any other
// program writing it would have made.
package tempfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Create creates a new file in dir whose name starts with prefix followed by a random number,
// opened for reading and writing with mode 0666 less the umask. It never opens an existing file
// (O_EXCL), trying another name if one is taken.
func Create(dir, prefix string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	var err error
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, err
}
