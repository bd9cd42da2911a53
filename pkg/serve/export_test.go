package serve

// Cost is the admission budget's estimate, in bytes of heap, of a request of n body bytes on the
// rpc fullMethod (JSON bytes when json, else protobuf bytes): what the budget's tests hold against
// the real heap growth of the service's handler.
func (s *Server) Cost(fullMethod string, n int64, json bool) int64 {
	r := s.routes.ByMethod[fullMethod]
	return s.budget.Cost(r != nil && r.Group, n, json)
}
