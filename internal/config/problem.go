package config

import (
	"errors"
	"fmt"
)

// A problem is one thing wrong with a configuration.
type problem struct {
	key  string // the key it concerns, as in workdirs[1].alias; "" if none
	text string // the message, naming the key
	line int    // line of the key in the file; 0 if unknown
}

func keyProblem(key, format string, args ...any) problem {
	return problem{key: key, text: key + ": " + fmt.Sprintf(format, args...)}
}

// fileError reports probs, found in the file name, one per line of the
// error's message.
func fileError(name string, probs []problem) error {
	errs := make([]error, len(probs))
	for i, p := range probs {
		if p.line > 0 {
			errs[i] = fmt.Errorf("%s:%d: %s", name, p.line, p.text)
		} else {
			errs[i] = fmt.Errorf("%s: %s", name, p.text)
		}
	}
	return errors.Join(errs...)
}
