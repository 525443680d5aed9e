package browse

import (
	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/rootgrant"
)

// Error codes of the Local PC Executor protocol v1.1 for browsing
// (beside browseapi.ReferenceInvalid, which decoding a request returns
// too).
const (
	// Unavailable: the directory disappeared, changed into a link or
	// junction, or is no longer accessible. The same code as rootgrant's.
	Unavailable = rootgrant.DirectoryUnavailable
)

func refInvalid(msg string) *errcode.Error { return errcode.New(browseapi.ReferenceInvalid, "%s", msg) }

func unavailable(msg string) *errcode.Error { return errcode.New(Unavailable, "%s", msg) }
