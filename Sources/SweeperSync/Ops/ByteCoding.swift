import SweeperConventions

/// Why an op, a sync message or another of this module's formats could not
/// be decoded: the byte codec's error, under the name this module's API has
/// always used.
public typealias SyncDecodingError = ByteDecodingError
