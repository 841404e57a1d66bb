import Foundation

/// Google's side of reconciliation (SPEC section 18): the purchases an Android client uploads
/// and their signatures, the Google Play Developer API, and real-time developer notifications.
/// This module knows nothing of the database; it is to Google Play what `AppStore` is to Apple.
public enum GooglePlay {
    /// The OAuth 2.0 scope of the Google Play Developer API.
    public static let scope = "https://www.googleapis.com/auth/androidpublisher"
    /// The API's default base URL (`GOOGLE_PLAY_API_URL`).
    public static let defaultAPIURL = "https://androidpublisher.googleapis.com"
}
