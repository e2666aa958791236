import StaffcastCore

extension ServerConfiguration {
    /// The server's settings from the effective configuration (checked by `ConfigResolver`:
    /// every value here is in its key's range). The one place a key meets its field.
    /// The database keys (database_url, data_dir, log_*) are the command line's, not the server's.
    public init(_ settings: EffectiveConfiguration) {
        self.init()
        let s = settings
        if let listen = s.text(.listen), let (host, port) = ConfigKey.splitHostPort(listen) {
            self.host = host
            self.port = port
        }
        databaseWorkers = s.integer(.databaseWorkers)
        jobQueueCapacity = s.integer(.jobQueueCapacity)
        outboundMaxFrames = s.integer(.outboundMaxFrames)
        outboundMaxBytes = s.integer(.outboundMaxBytes)
        maxInFlightPerConnection = s.integer(.maxInFlightPerConnection)
        sendBurst = s.number(.sendBurst)
        sendRatePerSecond = s.number(.sendRatePerSecond)
        listenerPollInterval = s.number(.listenerPollInterval)
        heartbeatInterval = s.integer(.heartbeatInterval)
        serviceThreads = s.integer(.serviceThreads)
        eventLoop = s.text(.eventLoop).flatMap(EventLoopKind.init(rawValue:)) ?? eventLoop
        maxConnections = s.integer(.maxConnections)
        maxConnectionsPerUser = s.integer(.maxConnectionsPerUser)
        headerTimeout = s.number(.headerTimeout)
        idleTimeout = s.number(.idleTimeout)
        writeStallTimeout = s.number(.writeStallTimeout)
        duplicateWindowMinutes = s.integer(.duplicateWindowMinutes)
        recentWindow = s.integer(.recentWindow)
        shutdownGrace = s.number(.shutdownGrace)
        if let v = s.text(.nodeID) { nodeID = v }
        opsToken = s.text(.opsToken)
        metricsRequireToken = s.flag(.metricsRequireToken)
        let minutes = s.integer(.escalateAfterMinutes)
        escalation.emergencyDefaultMinutes = minutes == 0 ? nil : minutes
        escalation.maxRounds = s.integer(.maxEscalationRounds)
        escalation.intervalSecondsOverride = s.value(.escalationIntervalSeconds)?.integer
        tlsCertificate = s.text(.tlsCert)
        tlsKey = s.text(.tlsKey)
        reach.pushVapidKey = s.text(.pushVapidKey)
        reach.pushContact = s.text(.pushContact) ?? reach.pushContact
        reach.smtpURL = s.text(.smtpURL)
        reach.emailFrom = s.text(.emailFrom)
        reach.emailAfterSeconds = s.integer(.emailAfterSeconds)
        reach.publicURL = s.text(.publicURL)
        reach.caFile = s.text(.deliveryCAFile)
        reach.concurrencyPerHost = s.integer(.deliveryConcurrencyPerHost)
        reach.threads = s.integer(.deliveryThreads)
    }
}
