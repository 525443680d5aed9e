package desktopapi

// DefaultMaxEdge is the longest edge of an observation's image unless the
// request says otherwise: the size computer-use models are commonly
// given.
const DefaultMaxEdge = 1280

// MaxMaxEdge bounds max_edge. The platform link asks for it: its wire
// protocol's coordinates are native, and it wants the capture unscaled
// (scaled down only past the per-request memory).
const MaxMaxEdge = 16384
