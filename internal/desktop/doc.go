// Package desktop is hostlink's computer control: the operations
// computer_desktops, computer_observe and computer_act over one native
// backend per OS (see package native for the contract, x11, win32 and
// quartz for the backends). The operations' names and their request and
// response types are in internal/desktopapi, which transports import
// instead of this package.
//
// The core owns everything that must behave the same on every OS:
//
//   - Coordinates. A caller only ever sees image coordinates: the pixels
//     of the observation it names, whose image is the capture scaled down
//     to max_edge (default 1280). The core maps them exactly, in integers,
//     to the backend's native space (see frame), and the bounds it returns
//     beside an image use the image's coordinates.
//   - Observation references. Every observation gets a reference that
//     expires after two minutes, belongs to the transport that asked for
//     it, and is consumed by the first act that names it. An act on an
//     unknown (foreign), expired or consumed reference is refused before
//     anything is dispatched.
//   - Drift. Before dispatch the core re-reads the session, the monitors
//     and the focused window and refuses the act if any changed since the
//     observation.
//   - Receipts. An act reports not_dispatched, accepted, partial (with the
//     steps that went through) or unknown. Accepted means the OS took the
//     input, never that an application did anything. The act then tries a
//     fresh observation; if that fails the receipt stands. Nothing is
//     replayed or rolled back.
//   - One queue per desktop: observations and acts on a desktop run one at
//     a time within the process.
//   - Image limits (package ops): PNG or JPEG at most 10 MiB each, four per
//     result, 64 MiB per request, held only in the request's memory.
package desktop
