// The Heritrix export loaded by Heritrix's own classes (tests/test_consumers.py):
//   java -cp 'deploy/crawlers/target/libs/heritrix/*' tests/java/HeritrixPolicyRun.java JOBDIR...
// Each JOBDIR holds crawler-beans.cxml, a Spring beans file as a crawl job's holds the export's
// wiring (docs/guide.md: an <import> of the exported file and a RulesCanonicalizationPolicy whose
// "rules" property refers to the exported "dustbusterRules" list), the exported file and urls.b64.
// Heritrix's job context is a FileSystemXmlApplicationContext (org.archive.spring.PathSharingContext
// extends it), so the file is loaded the same way, with Spring's XML schema validation.  Every line
// of urls.b64 is a URL in base64 (UTF-8); each line written to out.b64 is
// RulesCanonicalizationPolicy.canonicalize(url) in base64: each enabled rule once, in order, a
// RegexRule rewriting only when its regex matches the whole URI (heritrix-modules
// RegexRule.canonicalize: Matcher.matches(), then appendReplacement(format)).
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.archive.modules.canonicalize.RulesCanonicalizationPolicy;
import org.springframework.context.support.FileSystemXmlApplicationContext;

public class HeritrixPolicyRun {
    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        for (String job : args) {
            Path dir = Path.of(job).toAbsolutePath();
            FileSystemXmlApplicationContext ctx =
                new FileSystemXmlApplicationContext("file:" + dir.resolve("crawler-beans.cxml"));
            RulesCanonicalizationPolicy policy = ctx.getBean(RulesCanonicalizationPolicy.class);
            System.err.println("heritrix " + job + ": " + policy.getRules().size() + " rules in the policy");
            List<String> out = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("urls.b64"), StandardCharsets.UTF_8)) {
                String url = new String(dec.decode(line.trim()), StandardCharsets.UTF_8);
                out.add(enc.encodeToString(policy.canonicalize(url).getBytes(StandardCharsets.UTF_8)));
            }
            Files.write(dir.resolve("out.b64"), out, StandardCharsets.UTF_8);
            ctx.close();
        }
    }
}
