//go:build !linux

package procs

import "os"

// growPipe does nothing: only Linux lets a pipe's buffer be resized.
func growPipe(*os.File) {}
