import Foundation

/// Google Play's services as the settings configure them (SPEC section 18).
public enum GooglePlayServices {
    /// The verifier of Play uploads, nil while Play is off (`GOOGLE_PLAY_PACKAGE_NAMES` unset).
    public static func uploadVerifier(settings: Settings) throws -> (any UploadVerifier)? {
        guard settings.googlePlay.enabled else { return nil }
        // Arrives with the GooglePlay module's purchase verifier (issue 38).
        return nil
    }
}
