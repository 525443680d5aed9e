// Package files implements hostlink's file operations over jailed workdirs:
// list_workdirs, read_file, write_file, edit_file, stat, list_directory,
// create_directory, delete, move, find_files and search_text.
//
// Every path goes through a jail.Root; this package adds the operations'
// semantics (atomic replace, revisions, edits, pagination, search limits)
// and registers them in an ops.Registry so every transport serves them.
// The operations' names and their request and response types are in
// internal/fileapi, which transports import instead of this package.
package files
