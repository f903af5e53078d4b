package secrets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrInsecurePermissions is returned when a secret file is readable or writable by
// group or others (anything wider than 0600), or the file store's directory is
// writable by group or others (they could replace the file). Fix it with chmod;
// pitboss never loosens or silently tightens permissions for you.
var ErrInsecurePermissions = errors.New("insecure permissions")

// maxSecretFile bounds every secret file this package reads (keystores, the file
// store): they are small, and a bound keeps a wrong path from eating memory.
const maxSecretFile = 4 << 20

// checkPrivate fails with ErrInsecurePermissions when fi grants any access to group
// or others. Windows has no such mode bits; there the check is skipped.
func checkPrivate(path string, fi fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, want 0600 (chmod 600 %s): %w", path, perm, path, ErrInsecurePermissions)
	}
	return nil
}

// readPrivateFile reads a secret file after checking it is a regular file with
// private permissions and at most maxSecretFile bytes. The caller zeroes the result
// when it holds plaintext.
func readPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := checkPrivate(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	return io.ReadAll(io.LimitReader(f, maxSecretFile+1))
}

// mkdirPrivate creates dir (and parents) with mode 0700 if missing. An existing
// directory is left as it is.
func mkdirPrivate(dir string) error {
	return os.MkdirAll(dir, 0o700)
}

// writeFileAtomic replaces path with data: a 0600 temporary file in the same
// directory is written, fsynced and renamed over path, then the directory is
// fsynced, so a crash leaves either the old or the new file, never a torn one.
// With exclusive set it fails with fs.ErrExist instead of replacing a file.
func writeFileAtomic(path string, data []byte, exclusive bool) (err error) {
	dir := filepath.Dir(path)
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if exclusive {
		// Link fails if path exists: no window where another writer's file is replaced.
		if err = os.Link(tmp.Name(), path); err != nil {
			return err
		}
		_ = os.Remove(tmp.Name())
	} else if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
