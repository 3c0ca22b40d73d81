// The StormCrawler export loaded by StormCrawler's own classes (tests/test_consumers.py):
//   java -cp 'ROOT:deploy/crawlers/target/libs/stormcrawler/*' tests/java/StormFiltersRun.java ROOT JOB...
// StormCrawler before 3.0 (com.digitalpebble.stormcrawler, storm-crawler-core 1.18 from Maven
// Central; 3.x names the same classes org.apache.stormcrawler): a bolt builds
// URLFilters(stormConf, "urlfilters.json"), which reads that resource from the classpath
// (JSONResource.loadJSONResources) and instantiates the filters listed under its own class name
// (Configurable.configure), here one RegexURLNormalizer configured from its inline
// "urlNormalizers"; URLFilters.filter runs the filters in order, RegexURLNormalizer applying every
// regex once with Matcher.replaceAll and turning an empty result into null (the URL dropped).
// ROOT is on the classpath and each JOB a folder under it holding urlfilters.json and urls.b64, so
// the filters are built from the resource "JOB/urlfilters.json".  Every line of urls.b64 is a URL in
// base64 (UTF-8); each line written to out.b64 is the filtered URL in base64, or "-" when dropped.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.digitalpebble.stormcrawler.filtering.URLFilters;

public class StormFiltersRun {
    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        Path root = Path.of(args[0]);
        for (int i = 1; i < args.length; i++) {
            String job = args[i];
            Map<String, Object> stormConf = new HashMap<>();
            URLFilters filters = new URLFilters(stormConf, job + "/urlfilters.json");
            List<String> out = new ArrayList<>();
            for (String line : Files.readAllLines(root.resolve(job).resolve("urls.b64"), StandardCharsets.UTF_8)) {
                String url = new String(dec.decode(line.trim()), StandardCharsets.UTF_8);
                String got = filters.filter(null, null, url);
                out.add(got == null ? "-" : enc.encodeToString(got.getBytes(StandardCharsets.UTF_8)));
            }
            Files.write(root.resolve(job).resolve("out.b64"), out, StandardCharsets.UTF_8);
        }
    }
}
