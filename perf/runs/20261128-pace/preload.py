import http.client, sys, threading
port=int(sys.argv[1]); n=int(sys.argv[2]); T=4
def work(t):
    c=http.client.HTTPConnection("127.0.0.1",port)
    for i in range(t,n,T):
        c.request("PUT",f"/v0/entity?id=key{i:08d}&ack=2&from=3",body=b"v"*100); r=c.getresponse(); r.read()
        if r.status!=201: print("status",r.status,i)
ts=[threading.Thread(target=work,args=(t,)) for t in range(T)]; [t.start() for t in ts]; [t.join() for t in ts]
