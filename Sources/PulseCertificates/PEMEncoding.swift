import Crypto
import SwiftASN1
import X509

/// Turns certificates and keys into PEM text and back, with errors that name the file and what was found.
enum PEMEncoding {
    struct EncodedCertificate {
        let pem: String
        let fingerprint: String
    }

    static func encode(_ certificate: Certificate) throws(CertificateAuthorityError) -> EncodedCertificate {
        let der: [UInt8]
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            der = serializer.serializedBytes
        } catch {
            throw .signingFailed("certificate's DER encoding", underlying: error)
        }
        let pem = PEMDocument(type: Certificate.defaultPEMDiscriminator, derBytes: der).pemString + "\n"
        return EncodedCertificate(pem: pem, fingerprint: fingerprint(of: der))
    }

    /// Decodes the single certificate in `text` and returns it with its SHA-256 fingerprint.
    static func decodeCertificate(
        _ text: String,
        path: String
    ) throws(CertificateAuthorityError) -> (certificate: Certificate, fingerprint: String) {
        let document = try singleDocument(in: text) { reason in .invalidCertificatePEM(path, reason: reason) }
        guard document.discriminator == Certificate.defaultPEMDiscriminator else {
            throw .invalidCertificatePEM(
                path, reason: "it holds a '\(document.discriminator)' block, not a certificate")
        }
        do {
            let certificate = try Certificate(derEncoded: document.derBytes)
            return (certificate, fingerprint(of: document.derBytes))
        } catch {
            throw .invalidCertificatePEM(path, reason: "the certificate in it is malformed (\(error))")
        }
    }

    /// Decodes the single unencrypted private key in `text`.
    static func decodePrivateKey(_ text: String, path: String) throws(CertificateAuthorityError)
        -> Certificate.PrivateKey
    {
        let document = try singleDocument(in: text) { reason in .invalidKeyPEM(path, reason: reason) }
        switch document.discriminator {
        case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
            break
        case "ENCRYPTED PRIVATE KEY":
            throw .invalidKeyPEM(path, reason: "it is encrypted with a passphrase, which Netpulse does not support")
        default:
            throw .invalidKeyPEM(path, reason: "it holds a '\(document.discriminator)' block, not a private key")
        }
        do {
            return try Certificate.PrivateKey(pemDocument: document)
        } catch {
            throw .invalidKeyPEM(path, reason: "the key in it is malformed or of an unsupported type (\(error))")
        }
    }

    private static func singleDocument(
        in text: String,
        error makeError: (String) -> CertificateAuthorityError
    ) throws(CertificateAuthorityError) -> PEMDocument {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw makeError("it is not valid PEM (\(error))")
        }
        switch documents.count {
        case 0: throw makeError("it has no '-----BEGIN' block")
        case 1: return documents[0]
        default: throw makeError("it holds \(documents.count) PEM blocks where one was expected")
        }
    }

    private static func fingerprint(of der: [UInt8]) -> String {
        HexFormat.colonSeparated(SHA256.hash(data: der))
    }
}
