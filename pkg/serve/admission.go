package serve

// isGroup reports whether method is a group forecast's rpc (the budget costs those per student).
func (s *Server) isGroup(method string) bool {
	r := s.routes.ByMethod[method]
	return r != nil && r.Group
}

// Cost is the admission budget's estimate, in bytes of heap, of a request of n body bytes on the
// rpc fullMethod (JSON bytes when json, else protobuf bytes): what a test holds against the real
// heap growth of the service's handler, and what capacity planning can read.
func (s *Server) Cost(fullMethod string, n int64, json bool) int64 {
	return s.budget.Cost(s.isGroup(fullMethod), n, json)
}
