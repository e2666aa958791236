/// How a scenario publishes: WebSocket `send`s with a window in flight, or HTTP POSTs.
enum PublisherKind {
    case webSocket(PublishPlan, window: Int)
    case http(PublishPlan, connections: Int, pipeline: Int)
}
