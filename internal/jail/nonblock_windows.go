package jail

// nonblock is not needed on Windows: there are no FIFOs in the file
// namespace a root can reach.
const nonblock = 0
