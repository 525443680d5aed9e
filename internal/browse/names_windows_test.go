package browse

// invalidNames is empty on Windows: NTFS itself refuses control characters
// and names that are not UTF-16.
var invalidNames []string
