import AppStore

/// The local App Store simulator used by the demo and the tests; production never uses it.
public enum AppStoreSimulator {}
