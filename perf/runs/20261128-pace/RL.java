import com.google.common.util.concurrent.RateLimiter;
import java.util.concurrent.TimeUnit;
public class RL { public static void main(String[] a){
  for (int round=0; round<2; round++) {
    RateLimiter r = RateLimiter.create(20000, 1, TimeUnit.SECONDS); long t=System.nanoTime();
    for (int i=0;i<40000;i++) r.acquire();
    double s=(System.nanoTime()-t)/1e9; System.out.printf("per record: 40000 in %.2f s = %.0f/s%n", s, 40000/s);
    r = RateLimiter.create(20000, 1, TimeUnit.SECONDS); t=System.nanoTime();
    for (int i=0;i<40000;i+=200) r.acquire(200);
    s=(System.nanoTime()-t)/1e9; System.out.printf("per batch of 200: 40000 in %.2f s = %.0f/s%n", s, 40000/s);
  }
}}
